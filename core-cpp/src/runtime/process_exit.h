// How a process that hosts a JVM sluice created ends.
//
// sluice never destroys the JVM it creates (DestroyJavaVM waits for every non-daemon thread a
// filter may have started), so HotSpot's own threads still run while exit() runs the process's
// exit handlers and static destructors, libjvm's among them (-Xcheck:jni's periodic signal
// check then read freed memory and printed "SIGSEGV handler modified!" with garbage). A
// program that owns its process (the console, sluice-appd) asks to end without them once a
// JVM runs: its main() ends through finish(), the JVM's own exit (System.exit) does too, and
// a hook the JVM holder registers with on_exit catches any other exit(). That skips the
// program's exit handlers and static destructors, so it is for programs that have none to
// lose; a program that embeds sluice keeps ordinary exit() unless it asks too.
// See docs/runtime.md, "The JVM".
//
// Thread safety: every function may be called from any thread.
#ifndef SLUICE_RUNTIME_PROCESS_EXIT_H_
#define SLUICE_RUNTIME_PROCESS_EXIT_H_

namespace sluice::process {

// The program owns its process: call early in main(), before any Java filter starts. Also
// names a filter copy that calls exit() as a crash would be named (crash_report.h), and ends
// the process with status 1 then.
void end_before_jvm_statics_at_exit();

// The JVM holder, once it created the JVM (so after libjvm was loaded). Registers, with glibc's
// on_exit (which passes exit's status), a hook that calls finish(): exit handlers run
// last-registered first, so it runs before the destructors of libjvm's static objects, which
// were registered when libjvm was loaded, for an exit() that did not go through finish().
void jvm_started();

// When the program asked for it and a JVM sluice created runs: flushes stdout and stderr
// (skipping one whose lock another thread holds, where a flush could hang) and ends the
// process with `status` at once. Otherwise returns.
void finish(int status);

}  // namespace sluice::process

#endif  // SLUICE_RUNTIME_PROCESS_EXIT_H_
