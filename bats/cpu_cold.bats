#!/usr/bin/env bats
# Cold work happens before the program's first launch: the loader binds every symbol we import
# at load time, and cuInit maps every page of our image in (interpose/warm.c), so that a first,
# perhaps timed, launch takes neither lazy symbol lookups nor page faults of ours.

setup() { load helpers; }

@test "every imported symbol is bound at load (BIND_NOW)" {
    run readelf -d "$LIB"
    assert_success
    assert_output --regexp "FLAGS.*BIND_NOW"
}

@test "after cuInit every page of the library is mapped (fake driver)" {
    [ -x "$BUILD/tests/resident" ] || skip "make progs first"
    run env LD_PRELOAD="$LIB" "$BUILD/tests/resident"
    [ "$status" -ne 77 ] || skip "$output"
    assert_success
    assert_output --regexp "mapped after cuInit: ([0-9]+) of \1 pages"
}
