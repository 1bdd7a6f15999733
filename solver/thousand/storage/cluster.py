"""Tables solved on a Dask cluster: the checkpoints' folder, the client and its progress
line, the solve, the table written and the folder removed -- one run for the duel
(:func:`thousand.storage.solve.solve_duel_on_cluster`) and the N-player equilibrium
(:func:`thousand.storage.players.solve_players`); the solvers are
:mod:`thousand.solvers.cluster` and :mod:`thousand.solvers.cluster_nplayer`."""

from __future__ import annotations

import contextlib
import sys
from pathlib import Path

from thousand.base.errors import TableError
from thousand.base.i18n import _
from thousand.base.progress import Progress

from .files import folder_name, write_target

__all__ = ["cluster_meta", "on_cluster"]


def on_cluster(rs, objective, label, cluster, tables_dir, checkpoint, progress, solve, store, checkpoint_seconds=None):
    """A table solved on a Dask cluster: the checkpoints' folder (``checkpoint``, default
    ``.partial/<hash>-<objective>`` in the folder tables are written to), the client and
    its progress line, ``solve(client, folder, bar, checkpoint_seconds)``, then
    ``store(its result)`` (writing the table, atomically as every table) and the folder
    removed. A run finding a checkpoint of these rules goes on from it, with or without
    ``force`` (the values it holds lead to the same fixed point; removing the folder starts
    again); a run stopped by Ctrl-C leaves it and says so."""
    import shutil

    from thousand.solvers import cluster as cl

    folder = Path(checkpoint) if checkpoint else write_target(tables_dir) / ".partial" / folder_name(rs, objective)
    if folder.exists() and not folder.is_dir():
        raise TableError(_("--checkpoint {0} is a file, not a folder").format(folder))
    client, local = cl.connect(cluster)
    workers = len(client.scheduler_info()["workers"])
    bar = Progress(_("solving {0} on {1} workers").format(label, workers), progress)
    if progress and getattr(client, "dashboard_link", None):
        sys.stderr.write(_("Dask's dashboard: {0}").format(client.dashboard_link) + "\n")
    try:
        if progress and (folder / cl.STATE).exists():
            sys.stderr.write(_("going on from the checkpoint in {0}").format(folder) + "\n")
        every = cl.CHECKPOINT_SECONDS if checkpoint_seconds is None else checkpoint_seconds
        sol = solve(client, folder, bar, every)
    except KeyboardInterrupt:
        if progress:
            note = _("interrupted: the checkpoint stays in {0}; the same command goes on from it").format(folder)
            sys.stderr.write("\n" + note + "\n")
        raise
    finally:
        bar.close()
        client.close()
        if local is not None:
            local.close()
    out = store(sol)
    shutil.rmtree(folder, ignore_errors=True)
    if not checkpoint:
        with contextlib.suppress(OSError):
            folder.parent.rmdir()  # .partial, when no other solve's checkpoint is in it
    return out


def cluster_meta(spec: str, run) -> dict:
    """How a cluster solve ran, for the table's ``meta.json``: the cluster, its workers and
    blocks, the recoveries, whether it went on from a checkpoint, the bytes the
    coordinator moved, and each worker's peak memory and computing seconds."""
    return {
        "spec": spec,
        "workers": run.workers,
        "blocks": run.blocks,
        "recoveries": run.recoveries,
        "resumed": run.resumed_from is not None,
        "bytes_moved": run.bytes_moved,
        "worker_peak_mb": [round(m["peak_mb"], 1) for m in run.worker_memory],
        # seconds each block computed, over the solve's: how busy the workers were kept
        "worker_busy_s": [round(m["busy_s"], 3) for m in run.worker_memory],
    }
