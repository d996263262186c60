"""Synthetic clinical notes with exact gold PHI spans (training data, fixtures, benchmark input)."""

from deid_core.training.synth.generate import Plan, SynthNote, block_notes, generate, patient_notes

__all__ = ["Plan", "SynthNote", "block_notes", "generate", "patient_notes"]
