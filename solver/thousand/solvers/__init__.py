"""thousand.solvers: the game solvers -- race, duel (with its out-of-core value store), the
equal_turns last turn, points per turn, the N-player equilibrium and its approximations,
the geometric duel, poker dice's seat-order game, and the advice read off a solved turn.

May import thousand.base, thousand.rules, thousand.kernel and thousand.engine.
"""
