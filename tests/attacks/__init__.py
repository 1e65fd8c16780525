"""The standing attack suite: hostile inputs crafted at test time, each run through the real
command line in a measured subprocess (`tests.attacks.harness`)."""
