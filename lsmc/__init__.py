"""Host-side library of the LSM compaction accelerator project (lsmc)."""
