"""Dynamic behaviour a record can still serve (paper §6.2.2): watchers that follow it during a
monitor run, and the passes that rewrite the run's graph once it is over.

=================  ==================================================================================
module             job
=================  ==================================================================================
``watcher``        the protocol between the monitor run and its watchers (events in, decisions out)
``writes``         what a stretch of the run wrote (the one place loops and branches decide it)
``loops``          the loop watcher: counted loops whose trip count changes between calls
``rolling``        ``roll_loops``: a counted loop whose iterations repeat becomes one loop node
``branches``       the branch watcher: the arms of branches on tensor values
``merging``        ``merge_branches`` and the arm library: two sides seen become one conditional node
``nodes``          the graph nodes those passes make (RolledLoop, Conditional) and their graph targets
=================  ==================================================================================
"""
