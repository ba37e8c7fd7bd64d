"""Checks for the exercise notebooks: run the learner's work against the lab server and say what is wrong.

Every check prints one "✓" line when the work is right, and otherwise what is wrong,
what the server answered and a hint; given an unfinished stub it prints "not done yet".
A check never raises because of the learner's code.

`checks.check_first_frame` imports only exercise 00's module: a notebook pays for the checks it uses,
not for all twenty (together they import jsonschema, matplotlib and the SDK, about 3 s of CPU per kernel).
"""

from importlib import import_module

# Each name a notebook uses -> the module that defines it.
WHERE = {
    "check_first_frame": "ex00_first_look",
    "check_send_one": "ex00_first_look",
    "check_start_server": "ex00_first_look",
    "check_message_kinds": "ex01_stdio",
    "check_stdio_loop": "ex01_stdio",
    "check_envelope": "ex02_envelope",
    "check_version_recovery": "ex02_envelope",
    "check_fault_lab": "ex03_fault_lab",
    "FAULT_NAMES": "ex03_fault_lab",
    "FAULTS": "ex03_fault_lab",
    "show_faults": "ex03_fault_lab",
    "check_routing_headers": "ex03_http",
    "BATCH_BODY": "ex04_batches",
    "check_batch": "ex04_batches",
    "check_sse_messages": "ex04_sse",
    "check_reply_kinds": "ex05_tools",
    "check_search_then_read": "ex05_tools",
    "check_effective_hints": "ex06_content",
    "check_model_blocks": "ex06_content",
    "check_short_description": "ex06_descriptions",
    "VERBOSE_SEARCH_DESCRIPTION": "ex06_descriptions",
    "check_all_resources": "ex07_pagination",
    "check_prompt_completion": "ex07_resources",
    "check_templated_read": "ex07_resources",
    "check_finish_call": "ex08_mrtr",
    "check_retry_frame": "ex08_mrtr",
    "check_input_answers": "ex09_input_requests",
    "check_log_opt_in": "ex10_logging",
    "check_cancel": "ex10_notifications",
    "check_progress_fractions": "ex10_notifications",
    "check_envelope_from_initialize": "ex11_legacy",
    "check_translation": "ex11_legacy",
    "LEGACY_SESSION": "ex11_legacy",
    "check_era_probe": "ex12_probe",
    "check_host": "ex13_host",
    "check_host_routing": "ex13_host",
    "check_origin_guard": "ex14_security",
    "check_poison_flagger": "ex14_security",
    "weather_server": "ex14_security",
    "check_note_id_validator": "ex15_note_ids",
    "check_break_even": "ex16_costs",
    "check_model_copy": "ex16_costs",
    "check_cache_invalidation": "ex17_caching",
    "check_cache_rules": "ex17_caching",
    "measure_cache": "ex17_caching",
    "check_accept_redirect": "ex18_auth",
    "check_authorization_request": "ex18_auth",
    "check_step_up": "ex18_auth",
    "check_token_request": "ex18_auth",
    "check_three_differences": "ex19_wild",
    "check_deadline": "ex20_tasks",
    "check_follow": "ex20_tasks",
    "check_outcome": "ex20_tasks",
    "check_restart": "ex20_tasks",
    "check_connect_rule": "ex21_apps",
    "check_view_gate": "ex21_apps",
    "check_server_report": "ex22_field_trip",
    "field_trip_servers": "ex22_field_trip",
    "check_read": "ex23_server",
    "check_envelope_rules": "ex23_server",
    "check_call_tool": "ex23_server",
    "check_with_sdk_client": "ex23_server",
    "check_header_rules": "ex24_http_server",
    "check_request_state": "ex24_http_server",
    "check_with_suite": "ex24_http_server",
}

__all__ = sorted(WHERE, key=str.lower)


def __getattr__(name):
    if name not in WHERE:
        raise AttributeError(f"module 'checks' has no attribute {name!r}")
    value = getattr(import_module(f".{WHERE[name]}", __name__), name)
    globals()[name] = value
    return value


def __dir__():
    return sorted(set(globals()) | set(WHERE))
