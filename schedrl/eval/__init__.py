"""Evaluation harness: heuristics and trained policies on the same fixed sequences, tables and plots."""
