/* For the release's smoke test under Debian's wine64 (8.0) only, never shipped: Rust's standard
 * library draws random bytes with ProcessPrng from bcryptprimitives.dll, which every Windows 10
 * and later has and wine 8 lacks. This stand-in answers with advapi32's RtlGenRandom
 * (SystemFunction036), so the binary under test is the release's own, unchanged. */
#include <windows.h>

BOOLEAN WINAPI SystemFunction036(PVOID buffer, ULONG length);

BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T len) {
    while (len > 0) {
        ULONG chunk = len > 0x7fffffff ? 0x7fffffff : (ULONG)len;
        if (!SystemFunction036(data, chunk)) return FALSE;
        data += chunk;
        len -= chunk;
    }
    return TRUE;
}
