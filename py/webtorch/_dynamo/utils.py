"""torch._dynamo.utils.counters: what torch.compile did, as PyTorch counts it.

counters["frames"]["total"] / ["ok"]   first calls traced (one per guard entry) / traced without error
counters["stats"]["unique_graphs"]     graphs made (a graph break splits a call into two)
counters["stats"]["calls_captured"]    op nodes in those graphs
counters["graph_break"][reason]        graph breaks by reason
counters["recompiles"][reason]         retraces after a guard miss, by the first guard that failed
counters["webgpu"]["captures"|"replays"|"eager"]   calls 2+ by how they ran on webgpu
counters["replay_refused"][reason]     entries that stay eager on webgpu, by why (graph break, an output that
                                       requires grad, two captures that differ, ...)
"""
import collections

counters = collections.defaultdict(collections.Counter)
