"""Dynamic behaviour a record can still serve (paper §6.2.2): watchers that follow it during a
monitor run, and the passes that rewrite the run's graph once it is over. The watchers implement
the monitor's :class:`~magpy.monitor.Watcher` protocol and ask it what a stretch of the run wrote
(:mod:`magpy.monitor.writes`); the compiled callable hands them to each run (:data:`WATCHERS`).

=================  ==================================================================================
module             job
=================  ==================================================================================
``loops``          the loop watcher: counted loops whose trip count changes between calls
``rolling``        ``roll_loops``: a counted loop whose iterations repeat becomes one loop node
``branches``       the branch watcher: the arms of branches on tensor values
``merging``        ``merge_branches`` and the arm library: two sides seen become one conditional node
``nodes``          the graph nodes those passes make (RolledLoop, Conditional) and their graph targets
=================  ==================================================================================
"""
from .branches import BranchWatcher
from .loops import LoopWatcher

#: The watchers every monitor run makes (``RunSwitches.watchers``): counted loops, then branches.
WATCHERS = (LoopWatcher, BranchWatcher)
