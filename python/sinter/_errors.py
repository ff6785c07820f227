"""Status codes and the exceptions of the sinter package."""

STATUS_NAMES = {
    0: "SINTER_OK",
    1: "SINTER_INVALID_ARGUMENT",
    2: "SINTER_NO_DEVICE",
    3: "SINTER_CUDA_ERROR",
    4: "SINTER_OUT_OF_MEMORY",
    5: "SINTER_ABI_MISMATCH",
    6: "SINTER_CORRUPT_WEIGHTS",
    7: "SINTER_BUSY",
    8: "SINTER_INTERNAL",
}


class SinterError(RuntimeError):
    """A non-OK sinter_status: .status (int), .status_name ("SINTER_..."), and the message of
    sinter_last_error() (or of the Python-side check that raised it)."""

    def __init__(self, status, message):
        self.status = status
        self.status_name = STATUS_NAMES.get(status, f"status {status}")
        self.message = message
        super().__init__(f"{self.status_name}: {message}")


class SinterArgumentError(SinterError, ValueError):
    """An argument refused by a Python-side check before the library is called (the library
    answers SINTER_INVALID_ARGUMENT for the same): both a SinterError and a ValueError."""

    def __init__(self, message):
        super().__init__(1, message)
