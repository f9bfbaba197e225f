// hostile: a program whose object file is 1 GiB, to fill /scratch while it compiles
// expected: the compile stage hits the file size or tmpfs limit: compile_error, nothing left on the host
// timeout: 5
// expect: status=compile_error
// expect: max_ms=70000
// check: server-answers
// Not static: -O2 would drop an array that nothing writes.
char big[1u << 30] = {1};
int main() { return big[12345]; }
