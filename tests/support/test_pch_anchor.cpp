// The one file compiled with the tests' precompiled header (tests/CMakeLists.txt "Precompiled
// header"): every test executable reuses the header made here, so this file needs no code.
