"""A sample TMR cue: the kind of short sound the lab's targeted-memory-reactivation pilot replays during sleep.

The note `targeted-memory-reactivation` says each object-location pair is learned with a sound, and half of the
sounds are replayed at low volume in slow-wave sleep. The lab keeps no recording of its cues, so this one is
made here: a plain tone, short enough to travel as an audio content block (about 4 KB of WAV). It is computed,
not stored, so the same bytes come out on every machine.
"""

from __future__ import annotations

import io
import math
import struct
import wave

RATE_HZ = 8000
TONE_HZ = 440.0
DURATION_S = 0.25
FADE_S = 0.01  # a cue that starts or stops at full volume clicks, and a click can wake a sleeper
PEAK = 0.3 * 32767  # low volume, as the pilot plays its cues
WAV_MIME_TYPE = "audio/wav"


def _envelope(t: float) -> float:
    """Volume from 0 to 1: a linear fade in and out at the ends, full in between."""
    return min(1.0, t / FADE_S, (DURATION_S - t) / FADE_S)


def tmr_cue_wav() -> bytes:
    """The cue as a mono 16-bit PCM WAV file at 8 kHz."""
    samples = round(RATE_HZ * DURATION_S)
    frames = b"".join(
        struct.pack("<h", round(PEAK * _envelope(n / RATE_HZ) * math.sin(2 * math.pi * TONE_HZ * n / RATE_HZ)))
        for n in range(samples)
    )
    buffer = io.BytesIO()
    with wave.open(buffer, "wb") as wav:
        wav.setnchannels(1)
        wav.setsampwidth(2)
        wav.setframerate(RATE_HZ)
        wav.writeframes(frames)
    return buffer.getvalue()


def describe_cue() -> str:
    """One line a model can read in place of the sound."""
    return (f"A sample TMR cue: a {TONE_HZ:g} Hz tone of {DURATION_S:g} s with {FADE_S * 1000:g} ms fades, "
            f"mono {RATE_HZ // 1000} kHz WAV, played at low volume during slow-wave sleep.")
