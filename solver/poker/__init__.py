"""Poker dice («покер на костях», RULES.md section 10): rules, the turn, the seat-order game."""
