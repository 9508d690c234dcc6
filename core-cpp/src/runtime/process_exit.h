// How a process that hosts a JVM sluice created ends.
//
// sluice never destroys the JVM it creates (DestroyJavaVM waits for every non-daemon thread a
// filter may have started), so HotSpot's own threads still run while exit() runs the process's
// exit handlers, and exit() would go on to run libjvm's static destructors under them
// (-Xcheck:jni's periodic signal check then read freed memory and printed "SIGSEGV handler
// modified!" with garbage). A program that owns its process can ask to end before those
// destructors: once the JVM runs, exit() flushes stdio and ends the process there, with exit's
// status. That skips every exit handler and static destructor the program registered before
// the JVM started, so it is for sluice's own programs (the console, sluice-appd), which have
// none to lose; a program that embeds sluice keeps ordinary exit() unless it asks too.
// See docs/runtime.md, "The JVM".
//
// Thread safety: call before the first Java filter starts; read by the JVM holder.
#ifndef SLUICE_RUNTIME_PROCESS_EXIT_H_
#define SLUICE_RUNTIME_PROCESS_EXIT_H_

namespace sluice::process {

void end_before_jvm_statics_at_exit();
bool ends_before_jvm_statics_at_exit();

}  // namespace sluice::process

#endif  // SLUICE_RUNTIME_PROCESS_EXIT_H_
