"""Campaigns: many runs (platform x workload x policy x options) from one TOML file.

- :mod:`~snficon.campaign.config` reads and validates the file;
- :mod:`~snficon.campaign.expand` expands it to runs with ids;
- :mod:`~snficon.campaign.runs` is one run's folder and :func:`execute`;
- :mod:`~snficon.campaign.executors` runs specs (serial, local pool, Dask);
- :mod:`~snficon.campaign.runner` resumes, reports progress, writes the table
  of :mod:`~snficon.campaign.results`.
"""

from snficon.campaign.config import Campaign, read_campaign
from snficon.campaign.expand import RunSpec, check_inputs, expand, make_specs
from snficon.campaign.runner import run_campaign
from snficon.campaign.runs import execute, run_id, run_status

__all__ = ["Campaign", "RunSpec", "check_inputs", "execute", "expand", "make_specs",
           "read_campaign", "run_campaign", "run_id", "run_status"]
