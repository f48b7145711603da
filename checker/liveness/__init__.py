"""Liveness: temporal properties under fairness, checked on the state graph
that the bfs engine keeps, with lasso counterexamples.

A model file declares properties and fairness (syntax in `syntax.py`):

    fairness = ["WF(*)"]
    [temporal]
    Decided = "eventually AllDecided"

How a property is checked, once the bfs run has explored every reachable
state and kept every generated edge:

* `eventually G` fails iff some fair behaviour starts in an initial state
  where G is false and never reaches a G-state: a fair cycle (or a fair
  stutter) reachable from such an initial state through not-G states only.
* `F leads_to G` fails iff from some reachable state where F holds and G
  does not, a fair behaviour stays in not-G states forever.
  `always eventually G` is `TRUE leads_to G`.

Both reduce to one question on the graph, answered by
`fair_cycles.find_fair_lasso` (SCCs with networkx, refined for strong
fairness and filtered for weak fairness; see that module). The answer is a
lasso: a shortest stem and one turn of a cycle that meets every fairness
obligation, written as ITF with its `loop` field and, in the file's `#meta`,
`loop_action`: the action that closes the cycle, or "stutter".

Semantics, as in TLA+ and TLC:
* Stuttering is always allowed. A state with no successor (a deadlock) or
  whose enabled actions are all unfair stutters forever, so without
  fairness nearly every `eventually` fails: declare the fairness the
  protocol relies on. `WF(*)` is WF_vars(Next).
* Enabledness of an action in a state is read off the graph: the state has
  an out-edge labelled with it to a different state. A self-loop edge is a
  stutter: it neither takes nor enables an action.
* A fairness condition on an action family (`WF(Deliver)`) is one condition
  on the disjunction of its instances; `WF(Deliver(txn=*))` is one
  condition per instance. A condition on an action that no reachable state
  enables constrains nothing; it is listed as `unmatched_fairness` in the
  report (so one list can serve several variants, and a typo shows).

Limits:
* bfs engine only, and only when the run is complete and the graph kept:
  not with --no-graph, --symmetry, --por or --fingerprints (as in TLC,
  liveness and symmetry do not mix: a quotient graph can hide or invent
  cycles), nor when a safety property failed first (the exploration stopped
  early, so the graph is partial).
* Bounded models: a cycle forced only by a bound (a counter that stops at
  its maximum) is a real cycle of the bounded model; read each lasso
  against the bounds.
* Properties are the three forms above over state predicates; no nesting,
  no action formulas.
* The stem is shortest (to the nearest fair component); the cycle is one
  turn that meets every fairness obligation, not the shortest such cycle.
* Memory: successor lists for every state, plus a networkx graph of the
  states that lie on a cycle (most states of a protocol lie on none).
"""
