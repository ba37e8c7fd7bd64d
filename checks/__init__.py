"""Checks for the exercise notebooks: run the learner's work against the lab server and say what is wrong.

Every check prints one "✓" line when the work is right, and otherwise what is wrong,
what the server answered and a hint; given an unfinished stub it prints "not done yet".
A check never raises because of the learner's code.
"""

from .ex16_costs import check_break_even, check_model_copy
from .ex17_caching import check_cache_invalidation, check_cache_rules, measure_cache
from .ex18_auth import check_accept_redirect, check_authorization_request, check_step_up, check_token_request
from .ex19_wild import check_three_differences
from .ex02_envelope import check_envelope, check_version_recovery
from .ex04_batches import BATCH_BODY, check_batch
from .ex04_sse import check_sse_messages
from .ex03_fault_lab import FAULT_NAMES, FAULTS, check_fault_lab, show_faults
from .ex00_first_look import check_first_frame, check_send_one, check_start_server
from .ex13_host import check_host, check_host_routing
from .ex03_http import check_routing_headers
from .ex11_legacy import LEGACY_SESSION, check_envelope_from_initialize, check_translation
from .ex12_probe import check_era_probe
from .ex08_mrtr import check_finish_call, check_retry_frame
from .ex09_input_requests import check_input_answers
from .ex10_notifications import check_cancel, check_progress_fractions
from .ex10_logging import check_log_opt_in
from .ex07_pagination import check_all_resources
from .ex07_resources import check_prompt_completion, check_templated_read
from .ex14_security import check_origin_guard, check_poison_flagger, weather_server
from .ex15_note_ids import check_note_id_validator
from .ex01_stdio import check_message_kinds, check_stdio_loop
from .ex05_tools import check_reply_kinds, check_search_then_read
from .ex06_content import check_effective_hints, check_model_blocks
from .ex06_descriptions import VERBOSE_SEARCH_DESCRIPTION, check_short_description

__all__ = [
    "BATCH_BODY", "check_batch", "check_sse_messages",
    "check_effective_hints", "check_model_blocks",
    "check_all_resources", "check_break_even", "check_model_copy",
    "check_cache_invalidation", "check_cache_rules", "check_cancel", "check_envelope",
    "check_envelope_from_initialize", "check_fault_lab", "check_finish_call", "check_first_frame", "check_host",
    "check_host_routing", "check_input_answers", "check_log_opt_in", "check_message_kinds",
    "check_note_id_validator", "check_origin_guard",
    "check_poison_flagger", "check_progress_fractions", "check_prompt_completion", "check_reply_kinds",
    "check_retry_frame", "check_routing_headers", "check_search_then_read", "check_send_one",
    "check_short_description", "check_start_server", "check_stdio_loop", "check_templated_read",
    "check_translation", "check_version_recovery", "FAULT_NAMES", "FAULTS", "LEGACY_SESSION", "measure_cache",
    "show_faults", "VERBOSE_SEARCH_DESCRIPTION", "weather_server",
    "check_era_probe",
    "check_accept_redirect", "check_authorization_request", "check_step_up", "check_token_request",
    "check_three_differences",
]
