"""Independent references for the engine's physics tests.

``single_track``: the documented model (single-track chassis, lateral tyres (``tyre_laws``: linear /
Fiala / Magic Formula) with optional relaxation lengths (``relaxation``: Pacejka's first-order
transient slip angle), slip-driven rear wheel with its spin ODE and the speed-loop torque, hinge
servo, load transfer) written from the published equations and integrated by scipy's
``solve_ivp`` (Radau). ``linear_bicycle``: the linear single-track model with relaxation in
closed form (system matrices, frequency response), which checks the reference.
``commonroad``: CommonRoad's ST and STD models (``vehiclemodels``, Althoff et al. 2020) with our
parameters, integrating their own speed. ``manoeuvres``: the shared command histories.

Nothing here imports the engine's model, tyre, integrator, actuator or packing modules: the
references are written from ``docs/engine.md`` and the sources it cites, so that a wrong term in
the engine cannot hide in its own reference.
"""
