"""Claim support: does a cited work say what the sentence citing it claims?"""
