"""Campaigns: many runs (platform x workload x policy x options) from one TOML file.

- :mod:`~snficon.campaign.config` reads and validates the file;
- :mod:`~snficon.campaign.expand` expands it to runs with ids;
- :mod:`~snficon.campaign.runs` is one run's folder and :func:`execute`;
- :mod:`~snficon.campaign.executors` runs specs (serial, local pool, Dask);
- :mod:`~snficon.campaign.runner` resumes, reports progress, writes the table
  of :mod:`~snficon.campaign.results`.
"""
