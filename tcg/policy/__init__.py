"""Policy: load, layer, fingerprint, decide. Pure: no printing, no globals."""
