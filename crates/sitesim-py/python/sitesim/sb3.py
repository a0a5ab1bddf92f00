"""Stable-Baselines3 over sitesim's native vector environments.

SB3's algorithms take their own ``VecEnv``, not a Gymnasium vector environment, so a native
vector (``sitesim.gym.ReplayVectorEnv``, ``FeedbackVectorEnv``, ``SiteVectorEnv``: N
environments stepped in one native call) is wrapped here instead of falling back to one
Python environment per process::

    from stable_baselines3 import PPO
    from sitesim.gym import SiteVectorEnv
    from sitesim.sb3 import SB3VecEnv

    env = SB3VecEnv(SiteVectorEnv(num_envs=8, action_mode="score", window=32, users=100,
                                  weeks=2, warm_days=2))
    PPO("MlpPolicy", env).learn(100_000)

sb3-contrib's MaskablePPO reads the masks of pick mode through ``env_method("action_masks")``.
An env whose episode ends is reset in the same step, as SB3 expects: its last observation is
``infos[i]["terminal_observation"]`` and its measures ``infos[i]["measures"]``. Wrap it in
SB3's ``VecMonitor`` for episode returns in the training log. This module needs
``stable-baselines3`` (which needs torch); ``sitesim.gym`` does not.
"""

from __future__ import annotations

try:
    from stable_baselines3.common.vec_env import VecEnv
except ImportError as error:  # pragma: no cover - depends on the installation
    raise ImportError(
        "sitesim.sb3 needs stable-baselines3: pip install stable-baselines3"
    ) from error

from .gym import _SameStepAutoreset

__all__ = ["SB3VecEnv"]


class SB3VecEnv(_SameStepAutoreset, VecEnv):
    """A sitesim native vector environment as a Stable-Baselines3 ``VecEnv``: ``vec`` is a
    ``ReplayVectorEnv``, ``FeedbackVectorEnv`` or ``SiteVectorEnv``; ``SB3VecEnv(vec).seed(S)``
    then ``reset()`` seeds env i with S + i."""

    def __init__(self, vec):
        _SameStepAutoreset.__init__(self, vec)
        VecEnv.__init__(
            self, vec.num_envs, vec.single_observation_space, vec.single_action_space
        )

    def seed(self, seed=None):
        return _SameStepAutoreset.seed(self, seed)
