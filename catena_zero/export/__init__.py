"""catena_zero.export: standalone model files (torch.export program + metadata).

    from catena_zero.export import export_model, load_model_file
    export_model("runs/a/checkpoints/checkpoint-step000001200-iter000040.pt", "model.pt")
    model = load_model_file("model.pt")      # ModelFileError if missing/truncated/other version
    model.metadata.side, model.metadata.elo, model.run(planes, globals_)["policy_logits"]
"""

from catena_zero.export.exporter import ExportConfig, export_from_config, export_model
from catena_zero.export.model_file import (
    FORMAT_VERSION,
    ModelFile,
    ModelFileError,
    ModelMetadata,
    load_model_file,
    read_metadata,
    save_model_file,
)

__all__ = [
    "FORMAT_VERSION",
    "ExportConfig",
    "ModelFile",
    "ModelFileError",
    "ModelMetadata",
    "export_from_config",
    "export_model",
    "load_model_file",
    "read_metadata",
    "save_model_file",
]
