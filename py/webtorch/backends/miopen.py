"""torch.backends.miopen: AMD's MIOpen, absent here; the flag is settable, with no effect."""
immediate = False
