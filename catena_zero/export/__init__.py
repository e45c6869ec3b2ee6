"""catena_zero.export: standalone model files (metadata + safetensors weights, no pickles).

    from catena_zero.export import export_model, load_model_file
    export_model("runs/a/checkpoints/checkpoint-step000001200-iter000040.pt", "model.pt")
    model = load_model_file("model.pt")      # ModelFileError if missing/truncated/other version
    model.metadata.side, model.metadata.elo, model.run(planes, globals_)["policy_logits"]
    export_model(general_checkpoint, "general.pt", tracks=["6/komi/standard", "4/komi/standard"],
                 elos={"6/komi/standard": 910.0}, fair_komis={"4/komi/standard": 3.1})
    model.metadata.tracks, model.metadata.track_of("7/komi/standard")   # None: not trained on
    convert_model_file("old.pt", "new.pt")   # a format-1 file, read without unpickling
    export_model(general_checkpoint, "general.pt", ratings="ratings.json")  # Elo vs greedy

Loading a model file never unpickles or runs anything from it (see model_file).
"""

from catena_zero.export.convert import convert_model_file
from catena_zero.export.exporter import ExportConfig, export_from_config, export_model
from catena_zero.export.model_file import (
    FORMAT_VERSION,
    READ_VERSIONS,
    ModelFile,
    ModelFileError,
    ModelMetadata,
    ModelTrack,
    load_model_file,
    read_metadata,
    save_model_file,
)
from catena_zero.export.ratings import (
    Ratings,
    RatingsFileError,
    elo_from_record,
    read_ratings,
    write_ratings,
)

__all__ = [
    "FORMAT_VERSION",
    "READ_VERSIONS",
    "ExportConfig",
    "ModelFile",
    "ModelFileError",
    "ModelMetadata",
    "ModelTrack",
    "Ratings",
    "RatingsFileError",
    "convert_model_file",
    "elo_from_record",
    "export_from_config",
    "export_model",
    "load_model_file",
    "read_metadata",
    "read_ratings",
    "save_model_file",
    "write_ratings",
]
