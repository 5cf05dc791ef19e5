"""The `schedrl` command line."""
