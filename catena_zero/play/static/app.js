// catena-zero web client: draws the board as SVG and talks to the JSON API of web.py.
"use strict";

const SQRT3 = Math.sqrt(3);
const HEX_RADIUS = 1 / SQRT3;  // pointy-top hexagon whose width is one cell step
const SVG_NS = "http://www.w3.org/2000/svg";
let current = null;  // the last game state from the server
let busy = false;
// The server gives each page a secret token with its first game; only requests carrying
// it may read or change that page's games. Kept per tab, so a reload keeps its games.
const TOKEN_HEADER = "X-Catena-Token";
let token = loadToken();

function loadToken() {
  try { return window.sessionStorage.getItem("catena-token"); } catch (error) { return null; }
}

function saveToken(value) {
  token = value;
  try { window.sessionStorage.setItem("catena-token", value); } catch (error) { /* private mode */ }
}

function $(id) { return document.getElementById(id); }

// Cell (col, row) -> picture position; row 1 at the bottom, neighbours one unit apart.
function position(col, row) { return [col - row / 2, -row * SQRT3 / 2]; }

function hexPoints(x, y) {
  const points = [];
  for (let k = 0; k < 6; k++) {
    const angle = Math.PI / 180 * (60 * k - 90);
    points.push((x + HEX_RADIUS * Math.cos(angle)).toFixed(4) + "," +
                (y + HEX_RADIUS * Math.sin(angle)).toFixed(4));
  }
  return points.join(" ");
}

function element(tag, attributes, parent) {
  const node = document.createElementNS(SVG_NS, tag);
  for (const [key, value] of Object.entries(attributes)) node.setAttribute(key, value);
  if (parent) parent.appendChild(node);
  return node;
}

function setBusy(value) {
  busy = value;
  document.body.dataset.busy = value ? "1" : "0";
  for (const id of ["new", "take-button", "swap", "undo"]) $(id).disabled = value || $(id).dataset.off === "1";
}

async function api(path, body) {
  const headers = {};
  if (token) headers[TOKEN_HEADER] = token;
  const options = body === undefined ? {headers: headers} : {
    method: "POST", headers: Object.assign(headers, {"Content-Type": "application/json"}),
    body: JSON.stringify(body)};
  const response = await fetch(path, options);
  const payload = await response.json();
  if (!response.ok) {
    const failure = new Error(payload.error || ("HTTP " + response.status));
    failure.reason = payload.reason || null;  // the rule an illegal move breaks
    throw failure;
  }
  if (payload.token) saveToken(payload.token);
  return payload;
}

// While the model thinks, ask for the game's state now and then: it carries the search so
// far (visits, the move it would play now).
function watchSearch(pendingText) {
  const game = current && current.game;
  if (!game) return () => {};
  let stopped = false;
  const timer = setInterval(async () => {
    try {
      const state = await api("/api/state?game=" + encodeURIComponent(game));
      if (!stopped && busy && state.thinking && state.search) {
        $("status").textContent = pendingText + " " + state.search.visits +
          " visits, best so far " + state.search.best;
      }
    } catch (error) { /* the answer itself will say what went wrong */ }
  }, 400);
  return () => { stopped = true; clearInterval(timer); };
}

async function request(path, body, pendingText) {
  if (busy) return;
  setBusy(true);
  $("error").textContent = "";
  if (pendingText) $("status").textContent = pendingText;
  const stopWatching = pendingText && pendingText.startsWith("Model") ? watchSearch(pendingText)
                                                                      : () => {};
  try {
    const state = await api(path, body);
    current = state;
    render();
  } catch (error) {
    $("error").textContent = error.message;
    $("error").dataset.reason = error.reason || "";
    if (current) render();
  } finally {
    stopWatching();
    setBusy(false);
    if (current) updateButtons();
  }
}

function render() {
  const state = current;
  const svg = $("board");
  while (svg.firstChild) svg.removeChild(svg.firstChild);
  const side = state.side;
  const positions = state.coords.map(([c, r]) => position(c, r));
  const xs = positions.map(p => p[0]), ys = positions.map(p => p[1]);
  const margin = 1.3;
  const minX = Math.min(...xs) - margin, minY = Math.min(...ys) - margin;
  svg.setAttribute("viewBox", [minX, minY, Math.max(...xs) - minX + margin,
                               Math.max(...ys) - minY + margin].join(" "));
  const showOwnership = $("show-ownership").checked;
  const lastMoves = new Set(state.last_turn);
  const humanTurn = !state.over && state.to_move === state.human;
  state.cells.forEach((name, index) => {
    const [x, y] = positions[index];
    const stone = state.stones[index];
    const legal = state.legal[index];
    const unplayable = state.unplayable[index];
    const cell = element("polygon", {
      points: hexPoints(x, y), "data-cell": name,
      class: "cell " + (legal ? "legal" : (stone ? "" : "illegal")) + (unplayable ? " unplayable" : "")}, svg);
    element("title", {}, cell).textContent = name + (unplayable ? " (no stone can go here)" : "");
    // An empty cell that is not legal is still clickable on your turn: the server says why.
    if (legal || (humanTurn && !stone)) cell.addEventListener("click", () => play(name));
    if (unplayable) element("circle", {cx: x, cy: y, r: 0.08, class: "unplayable-mark"}, svg);
    if (stone) {
      element("circle", {
        cx: x, cy: y, r: 0.4, "data-cell": name,
        class: "stone " + (stone === 1 ? "black" : "white") + (state.limited[index] ? " limited" : "")}, svg);
    }
    if (lastMoves.has(name)) element("circle", {cx: x, cy: y, r: 0.18, class: "last-move"}, svg);
    const owner = state.eval.ownership_black[index];
    // No square on a claimed stone or on a cell no stone can reach: nothing is in doubt.
    if (showOwnership && !state.limited[index] && !unplayable && Math.abs(owner) > 0.05) {
      const size = 0.32 * Math.sqrt(Math.abs(owner));
      element("rect", {
        x: x - size / 2, y: y - size / 2, width: size, height: size, class: "ownership",
        fill: owner > 0 ? "#000" : "#fff", "fill-opacity": 0.75,
        stroke: owner > 0 ? "#fff" : "#000", "stroke-width": 0.015}, svg);
    }
  });
  drawCoordinates(svg, side);
  $("winrate").textContent = (100 * state.eval.winrate_black).toFixed(1) + "%";
  const lead = state.eval.score_lead_black;
  $("score-lead").textContent = formatLead(lead) + " " + state.score_units;
  // Only the model that plays this game's side.
  $("model").textContent = state.model || "";
  renderExplanations(state);
  $("komi-shown").textContent = state.komi;
  $("button-holder").textContent = !state.has_button ? "not used" : (state.button_holder || "available");
  $("result").textContent = state.result || "-";
  $("notes").textContent = state.notes.join("; ");
  // A board or variant outside the model's training: it plays, and the page says so.
  $("track-note").textContent = state.track_note || "";
  const history = $("history");
  history.innerHTML = "";
  state.history.forEach((move, index) => {
    const item = document.createElement("li");
    const colour = state.history_colours[index];
    item.textContent = move;
    item.className = colour;
    item.title = colour + "'s move";
    history.appendChild(item);
  });
  let status;
  if (state.over) status = "Game over: " + state.result + (resultForHuman(state));
  else if (state.to_move === state.human) status = "Your move (" + state.human + ")";
  else status = "Model to move";
  if (state.model_moves.length && !state.over) status += " - model played " + state.model_moves.join(", ");
  $("status").textContent = status;
  updateButtons();
}

function formatLead(lead) {
  const rounded = Math.round(lead * 10) / 10;
  if (rounded === 0) return "0";
  return (rounded > 0 ? "B+" : "W+") + Math.abs(rounded).toFixed(1).replace(/\.0$/, "");
}

// The live score with its parts (the final breakdown once over), the ribbons the last
// move claimed, and the nokomi swap decision.
function renderExplanations(state) {
  const score = state.score;
  $("score").textContent = score.final ? score.breakdown.join("\n") : score.line;
  const claims = $("claims");
  claims.innerHTML = "";
  for (const claim of state.claims) {
    const item = document.createElement("li");
    item.textContent = claim.text;
    item.className = "claim " + claim.owner;
    claims.appendChild(item);
  }
  $("swap-decision").textContent = state.swap_decision || "";
}

function resultForHuman(state) {
  if (state.result === "0") return " (draw)";
  const winner = state.result.startsWith("B") ? "black" : "white";
  return winner === state.human ? " - you win" : " - the model wins";
}

function drawCoordinates(svg, side) {
  const last = 2 * side - 2;
  for (let c = 0; c <= last; c++) {
    const lowest = Math.max(0, c - (side - 1));
    const [x, y] = position(c, lowest - 0.85);
    element("text", {x: x, y: y, class: "coord"}, svg).textContent = String.fromCharCode(65 + c);
  }
  for (let r = 0; r <= last; r++) {
    const leftmost = Math.max(0, r - (side - 1));
    const [x, y] = position(leftmost - 0.85, r);
    element("text", {x: x, y: y, class: "coord"}, svg).textContent = String(r + 1);
  }
}

function updateButtons() {
  const state = current;
  const humanTurn = state && !state.over && state.to_move === state.human;
  const flags = {
    "take-button": !(humanTurn && state.button_legal),
    "swap": !(state && state.can_swap),
    "undo": !(state && state.can_undo),
  };
  for (const [id, off] of Object.entries(flags)) {
    $(id).dataset.off = off ? "1" : "0";
    $(id).disabled = busy || off;
  }
}

function play(move) {
  if (!current || busy) return;
  request("/api/move", {game: current.game, move: move}, "Model thinking...");
}

function newGame(event) {
  if (event) event.preventDefault();
  const komiText = $("komi").value.trim().toLowerCase();
  const komi = komiText === "auto" ? "auto" : Number(komiText);
  if (komi !== "auto" && !Number.isInteger(komi)) {
    $("error").textContent = "komi must be a whole number or auto";
    return;
  }
  request("/api/new", {
    side: Number($("side").value), game_type: $("game-type").value, scoring: $("scoring").value,
    komi: komi, colour: $("colour").value, think: $("think").value}, "Starting...");
}

async function start() {
  $("new-game").addEventListener("submit", newGame);
  $("take-button").addEventListener("click", () => play("button"));
  $("swap").addEventListener("click", () => current && request("/api/swap", {game: current.game}, "Model thinking..."));
  $("undo").addEventListener("click", () => current && request("/api/undo", {game: current.game}));
  $("show-ownership").addEventListener("change", () => current && render());
  // nokomi and double allow only komi 0; keep the field valid when switching.
  $("game-type").addEventListener("change", () => {
    if ($("game-type").value !== "komi" && $("komi").value !== "auto") $("komi").value = "0";
  });
  try {
    const info = await api("/api/info");
    for (const side of info.sides) $("side").add(new Option(String(side), String(side)));
    if (info.sides.includes(info.default_side)) $("side").value = String(info.default_side);
    for (const name of info.game_types) $("game-type").add(new Option(name, name));
    for (const name of info.scorings) $("scoring").add(new Option(name, name));
    if (!info.sides.length) throw new Error("no model available: start the server with --model FILE");
    newGame();
  } catch (error) {
    $("error").textContent = error.message;
    $("status").textContent = "";
  }
}

// ---- Game records: save, load, and stepping through a loaded or finished game ----------
// (docs/reference/records.md). Kept apart from the drawing above: a replayed position is
// shown by handing render() a copy of the live state with that position's stones.

let replay = null;  // {game, count, positions, step, live, view} while stepping
let loadedGame = null;  // the game id made from a loaded record

function liveState() {
  return replay && current === replay.view ? replay.live : current;
}

async function saveRecord(event) {
  event.preventDefault();
  const state = liveState();
  if (!state) return;
  $("error").textContent = "";
  try {
    const headers = token ? {[TOKEN_HEADER]: token} : {};
    const response = await fetch("/api/record?game=" + encodeURIComponent(state.game),
                                 {headers: headers});
    if (!response.ok) throw new Error((await response.json()).error || ("HTTP " + response.status));
    const url = URL.createObjectURL(await response.blob());
    const link = document.createElement("a");
    link.href = url;
    link.download = "catena-" + state.game + ".sgf";
    document.body.appendChild(link);
    link.click();
    link.remove();
    URL.revokeObjectURL(url);
  } catch (error) {
    $("error").textContent = error.message;
  }
}

async function loadRecord() {
  const file = $("load-record").files[0];
  if (!file) return;
  const text = await file.text();
  $("load-record").value = "";
  replay = null;
  await request("/api/load", {record: text}, "Loading the record...");
  if (current && current.history) loadedGame = current.game;
  updateReplayButtons();
}

async function replayStep(where) {
  const live = liveState();
  if (!live || busy) return;
  if (!replay || replay.game !== live.game || replay.count !== live.history.length) {
    try {
      const positions = await api("/api/replay?game=" + encodeURIComponent(live.game));
      replay = {game: live.game, count: live.history.length, positions: positions,
                step: live.history.length, live: live, view: null};
    } catch (error) {
      $("error").textContent = error.message;
      return;
    }
  }
  const last = replay.positions.moves.length;
  const steps = {first: 0, previous: replay.step - 1, next: replay.step + 1, last: last};
  replay.step = Math.max(0, Math.min(last, steps[where]));
  showReplayStep();
}

function showReplayStep() {
  const {positions, step, live} = replay;
  const last = positions.moves.length;
  if (step === last) {
    replay.view = null;
    current = live;
    render();
  } else {
    const view = Object.assign({}, live, {
      stones: positions.stones[step], limited: positions.limited[step],
      legal: live.legal.map(() => false), button_legal: false, can_swap: false,
      can_undo: false, over: false, result: null, history: positions.moves.slice(0, step),
      model_moves: step ? [positions.moves[step - 1]] : []});
    replay.view = view;
    current = view;
    render();
    $("status").textContent = "Replay: move " + step + " of " + last + " (>| returns to the game)";
  }
  updateReplayButtons();
}

function updateReplayButtons() {
  const live = liveState();
  const usable = !!live && live.history.length > 0 && (live.over || live.game === loadedGame);
  const step = replay && replay.game === (live && live.game) ? replay.step : (live ? live.history.length : 0);
  const last = live ? live.history.length : 0;
  $("replay-first").disabled = !usable || step === 0;
  $("replay-previous").disabled = !usable || step === 0;
  $("replay-next").disabled = !usable || step >= last;
  $("replay-last").disabled = !usable || step >= last;
  $("save-record").classList.toggle("disabled", !live);
}

function setupRecords() {
  $("save-record").addEventListener("click", saveRecord);
  $("load-record").addEventListener("change", loadRecord);
  for (const where of ["first", "previous", "next", "last"]) {
    $("replay-" + where).addEventListener("click", () => replayStep(where));
  }
  // After every answer from the server the replay buttons follow the new state.
  const observer = new MutationObserver(() => updateReplayButtons());
  observer.observe($("status"), {childList: true, characterData: true, subtree: true});
  updateReplayButtons();
}

setBusy(false);
setupRecords();
start();
