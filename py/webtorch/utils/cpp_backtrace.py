"""torch.utils.cpp_backtrace: the C++ frames of the current call (none in webtorch)."""


def get_cpp_backtrace(frames_to_skip=0, maximum_number_of_frames=64):
    """The C++ frames of the current call: webtorch has none, so the backtrace is empty."""
    return ""
