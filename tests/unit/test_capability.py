"""Capability profile rules, banner and redacted form."""

from __future__ import annotations

import dataclasses

import pytest

from doiget.capability import CapabilityProfile
from doiget.errors import DenialReason, DoigetError, ErrorCode
from doiget.upstreams.limits import HARD_CODED

KEY = "els-KEY-0123456789abcdef"


def test_agree_and_key_grant_the_source() -> None:
    profile = CapabilityProfile.from_env(
        {"DOIGET_AGREE_TDM_ELSEVIER": "1", "DOIGET_KEY_ELSEVIER": KEY}
    )
    grant = profile.require_tdm("elsevier")
    assert grant.api_key.reveal() == KEY
    assert grant.agree_env_var == "DOIGET_AGREE_TDM_ELSEVIER"
    assert profile.to_redacted_dict()["tdm_elsevier"] is True
    assert profile.to_redacted_dict()["tdm_enabled"] is True


def test_agree_without_key_refuses_start_naming_both_variables() -> None:
    with pytest.raises(DoigetError) as caught:
        CapabilityProfile.from_env({"DOIGET_AGREE_TDM_APS": "1"})
    assert caught.value.code is ErrorCode.CAPABILITY_DENIED
    assert "DOIGET_AGREE_TDM_APS" in caught.value.message
    assert "DOIGET_KEY_APS" in caught.value.message


@pytest.mark.parametrize("agree", [None, "yes", "true", "0"])
def test_key_without_agreement_refuses_start(agree: str | None) -> None:
    env = {"DOIGET_KEY_SPRINGER": KEY}
    if agree is not None:
        env["DOIGET_AGREE_TDM_SPRINGER"] = agree
    with pytest.raises(DoigetError) as caught:
        CapabilityProfile.from_env(env)
    assert caught.value.code is ErrorCode.CAPABILITY_DENIED
    assert "DOIGET_AGREE_TDM_SPRINGER" in caught.value.message
    assert KEY not in caught.value.message


def test_nothing_set_grants_nothing_and_tdm_is_denied_with_context() -> None:
    profile = CapabilityProfile.from_env({})
    assert profile.grants() == []
    with pytest.raises(DoigetError) as caught:
        profile.require_tdm("aps")
    assert caught.value.denial is not None
    assert caught.value.denial.reason is DenialReason.CAPABILITY_NOT_GRANTED
    assert caught.value.denial.source == "tdm-aps"


@pytest.mark.parametrize("on", ["", "1", "true", "TRUE", "yes", "on", " 1 "])
def test_metadata_sources_are_enabled_by_presence(on: str) -> None:
    profile = CapabilityProfile.from_env({"DOIGET_ENABLE_OPENALEX": "", "DOIGET_ENABLE_DOAJ": on})
    assert profile.metadata.enabled() == ["openalex", "doaj"]
    assert profile.to_redacted_dict()["metadata_sources"] == ["openalex", "doaj"]


@pytest.mark.parametrize("off", ["0", "false", "False", "no", "OFF", " 0 "])
@pytest.mark.parametrize(
    "var", ["DOIGET_ENABLE_OPENALEX", "DOIGET_ENABLE_S2", "DOIGET_ENABLE_DOAJ"]
)
def test_an_enable_variable_that_reads_as_off_refuses_the_start(var: str, off: str) -> None:
    """Presence would turn the source on whatever the value: a value meaning off is a
    misunderstanding, refused with the advice to unset the variable."""
    with pytest.raises(DoigetError) as caught:
        CapabilityProfile.from_env({var: off})
    assert caught.value.code is ErrorCode.INVALID_CONFIG
    assert caught.value.exit_status == 2
    assert f"Unset {var}" in caught.value.message


def test_banner_is_one_line_without_any_key_text() -> None:
    profile = CapabilityProfile.from_env(
        {
            "DOIGET_ENABLE_OPENALEX": "1",
            "DOIGET_AGREE_TDM_ELSEVIER": "1",
            "DOIGET_KEY_ELSEVIER": KEY,
        }
    )
    banner = profile.banner()
    assert "\n" not in banner
    assert banner.startswith("[doiget] capability: oa=on metadata=[openalex] tdm=[elsevier(agreed=")
    for piece in (KEY, KEY[:8], KEY[-8:]):
        assert piece not in banner
        assert piece not in repr(profile)
        assert piece not in str(profile.to_redacted_dict())


def test_profile_is_immutable_and_limits_are_hard_coded() -> None:
    profile = CapabilityProfile.from_env({})
    with pytest.raises(dataclasses.FrozenInstanceError):
        profile.tdm = ()  # type: ignore[misc]
    assert profile.rate_limits is HARD_CODED
    assert (
        HARD_CODED.max_concurrent_fetches,
        HARD_CODED.max_fetches_per_second,
        HARD_CODED.per_source_backoff_ms,
    ) == (5, 5.0, 200)
    assert profile.to_redacted_dict()["rate_limit_per_sec"] == 5.0
    with pytest.raises(TypeError):
        CapabilityProfile(metadata=profile.metadata, rate_limits=None)  # type: ignore[call-arg]


def test_later_environment_changes_do_not_change_a_profile() -> None:
    env = {"DOIGET_ENABLE_S2": "1"}
    profile = CapabilityProfile.from_env(env)
    env["DOIGET_ENABLE_OPENALEX"] = "1"
    assert profile.metadata.enabled() == ["semantic_scholar"]
