"""The model as a library: the reference broker in this process (model_broker.py), and the reference client
(model_client.py: the spec's client rules on the project's wire client) and record codec (model_codec.py:
models/codec.py and models/records.py) every library is compared with. Through the Python driver they speak the
driver protocol too: the driver side's own check (the same verdicts as in process)."""

from __future__ import annotations

from conformance.targets.kinds.library import CLIENT_ROLE, CODEC_ROLE, python_library

MODEL_LIBRARY = python_library(
    "model", "this package", None,
    {
        CODEC_ROLE: "conformance.targets.libraries.model.model_codec:ModelCodec",
        CLIENT_ROLE: "conformance.targets.libraries.model.model_client:ReferenceClient",
    },
    registry="this package",
)  # fmt: skip
