"""The paper's RL baseline, RL Budiarjo (Budiarjo et al., SCA 2025), as parts for a policy.

The paper compares SNF-ICON with a deep-RL power manager: an advantage
actor-critic with an attention encoder over the nodes, on top of FCFS with
EASY backfilling, trained per dataset with the curriculum simple -> real ->
complex (paper sections VI-A/B, VII-A/B). The paper leaves the design to
its reference [14]; what is fixed here follows the authors' public code
(SPARS-ICON: ``SPARS/Gym/``, ``RL_Agent/SPARS/Budiarjo.py``,
``BuildCurriculum.py``), read, not copied.

A power manager is the part of a policy invoked after the dispatch order
started what fits: it sees the cluster (a ``ClusterView`` with the starts
applied) and the dispatch order's plan of the waiting jobs, and answers node
switch-ons and switch-offs. The pieces:

==============================  ===========================================================
observation                     :mod:`snficon.rl.features`: 13 features per node (state
                                one-hot, idle time, requested time left, transition
                                left, time until ready, planned use and its time, wasted
                                energy and switching time so far) and 7 of the queue
                                (length, recent arrivals, mean wait, cluster wasted
                                energy, mean request, demand, next planned start),
                                float32, scaled to a few units
action                          per node keep / switch on / switch off, masked: only a
                                sleeping node may switch on, only an idle node that can
                                sleep may switch off (:func:`~snficon.rl.features.switches`
                                turns actions into the two node lists)
what the nodes spend            :mod:`snficon.rl.ledger`: each node's state between two
                                invocations, its wasted energy and switching time
                                (equal to Batsim's output files over a whole run), the
                                running totals the observation reads
reward                          :mod:`snficon.rl.reward`: -w_E x (mean wasted-energy
                                share of the nodes that had a choice) - w_W x (mean
                                waiting share of the jobs), w_E = w_W = 0.5
network                         :mod:`snficon.rl.model` (PyTorch, CPU): node + queue
                                features -> Linear(128) -> 3 x [8-head self-attention,
                                feed-forward 512] -> per-node head (64, 32, 2: desired
                                state off/on) and critic (mean of nodes + queue -> 20,
                                20, 1)
learning                        :mod:`snficon.rl.a2c`: n-step returns (gamma 0.99,
                                rollouts of 32 decisions), advantage, value loss,
                                entropy bonus, global-norm clipping 0.5, Adam 1e-4
curriculum                      ``snficon workload convert --skip 3000 --jobs 1000``
                                (the training segment), ``snficon workload curriculum``
                                (:mod:`snficon.workload.curriculum`: simple, real,
                                complex, seeded)
==============================  ===========================================================

On the policy seam (:class:`snficon.core.parts.PowerManager`), a learned
power manager's ``decide(view, dispatched, order)`` would: see
``power_view(view, dispatched)`` (:mod:`snficon.rl.ledger`); plan the
waiting jobs with ``order.plan`` on ``dispatched.requested_release(now)``
for their requested times, as IPM does; add the interval since its previous
invocation to a :class:`~snficon.rl.ledger.NodeHistory` (from the previous
view and decisions, with the power model ``power_model_of(nodes,
p_sleep_w)``); ``observe``, ``act`` and ``switches``. The reward of a step
is :func:`~snficon.rl.reward.transition_reward`, or
:class:`~snficon.rl.reward.StepMeter` when a step spans several
invocations.

How the authors run it, for the environment and the policy still to write:
the agent acts on a fixed clock, every ``rl.dt`` = 3600 s of simulated time
(a ``CALL_RL`` event), not at every scheduler invocation; between its
decisions the scheduler is ``easy_psus``: FCFS with EASY backfilling on the
idle nodes only, which never wakes a node and has no idle timeout
(``timeout: None``), so nodes sleep and wake only when the agent says so.
Training: 10 epochs per stage, stages simple, real, complex (the 1000 jobs
after the evaluated 3000, and the two made from them); evaluation picks the
most likely action (argmax). Nothing is seeded.

What differs from the authors' code, and why:

- **Their actor is never trained.** Log-probabilities are computed while
  sampling under ``torch.no_grad()`` and stored detached, so the actor's
  loss has no gradient; only the critic learns. And the critic reads the
  mean over the nodes of instance-normalised embeddings, which is the last
  normalisation's bias whatever the input: it is a learned constant. Both
  checked by running their model file: the stored log-probabilities do not
  require a gradient, and the critic's value is the same to 7 digits for
  inputs scaled from 1 to 1e4. So the paper's RL Budiarjo points are those
  of a randomly initialised (unseeded) network evaluated greedily. Here the
  actor is trained (:mod:`snficon.rl.a2c`) and the network uses LayerNorm
  (:mod:`snficon.rl.model`). A trained agent need not land on the paper's
  extreme points: what the paper measured is an untrained network.
- **Scaled features**: the authors feed seconds and joules as they are (up
  to ~1e9); here durations are log(1 + d/3600) capped at one day, counts
  log(1 + n), totals shares in [0, 1]. The state is one-hot rather than a
  code 0..3.
- **Features from the plan** (time until ready, planned use, next start,
  demand) and the remaining transition: the authors' scheduler plans
  nothing; the seam hands the power manager the dispatch order's plan.
- **Actions**: three masked actions per node rather than two outputs of
  which the disallowed one is dropped; the head's two outputs keep the
  authors' meaning (desired state) and give the same distribution.
- **Waiting term**: a job that arrives during a step counts the time it
  really waited, not the whole step.
- **Update**: mean over the steps rather than the sum, and an entropy
  bonus (0.01); the value loss has weight 0.5 on one shared encoder (the
  authors train two encoders).
- **Curriculum files** keep the segment's ``nb_res`` (the authors' set it to
  the largest job); otherwise they are the authors' files job for job.

PyTorch and Gymnasium are the ``rl`` dependency group: ``uv sync --group
rl``. Where a folder holds a CPU build of PyTorch 2.13.0, make uv take it
(and not a several-GB CUDA build) with ``UV_FIND_LINKS=FOLDER
UV_INDEX_STRATEGY=unsafe-best-match uv sync --group rl`` (remove a
``uv.lock`` made without them first: it keeps the version it chose); add
``--compile-bytecode`` when ``PYTHONDONTWRITEBYTECODE`` is set, or every
``import torch`` compiles its ~10,000 modules again. :mod:`snficon.rl.features`,
:mod:`~snficon.rl.ledger` and :mod:`~snficon.rl.reward` need only numpy;
:mod:`~snficon.rl.model` and :mod:`~snficon.rl.a2c` need PyTorch, and this
package imports neither of them.
"""
