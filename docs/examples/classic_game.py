"""How docs/examples/classic-game.json was made: a game of classic between two players
who play as people at a table do, kept by the scorekeeper (the entries `thousand play`
logs, the program throwing the dice with --seed 2027) and saved as `thousand play` saves it.

Anna rolls on or stops as the scorekeeper's race advice says (`?` with --advice race: the
fewest expected turns to win alone, blind to her opponent); Boris stops once his turn
total reaches 250, or 150 with two dice or fewer to roll. Run it with
``python docs/examples/classic_game.py docs/examples/classic-game.json``.
"""

import sys
from pathlib import Path

from thousand.play.game import Advisors, Game, game_entry
from thousand.play.session import save_game
from thousand.rules import load_ruleset


def choose(g: Game, race: Advisors) -> str:
    tr = g.turn
    if tr.roll is not None or not g.engine.can_stop(tr.state):
        return "keep" if tr.roll is not None else "roll"
    if g.current == 0:
        _head, advice, _exact = race.advice(g)[0]
        return "stop" if advice.best.action == "stop" else "roll"
    return "stop" if tr.total >= (250 if tr.dice > 2 else 150) else "roll"


def main(out: str) -> None:
    rs = load_ruleset("classic")
    g = Game(rs, ["Anna", "Boris"], "classic", (), seed=2027)
    race = Advisors(rs, "race", None)
    while not g.over:
        verb = choose(g, race)
        g.submit(game_entry(g, verb, "", verb))
    save_game(g, Path(out))
    print(f"{len(g.log)} entries in {g.round} rounds, {g.names[g.winners[0]]} won; saved {out}")


if __name__ == "__main__":
    main(sys.argv[1])
