// Ground-truth mode of the agent (oracle=1): see oracle.cpp and docs/oracle-format.md.
#pragma once
#include <jvmti.h>

#include "options.h"

namespace jportal {

// Sets up single-stepping ground truth into opts.out. Never fails the JVM: problems are logged and the JVM
// runs on without the oracle.
jint startOracle(JavaVM* vm, jvmtiEnv* jvmti, const Options& opts);

}  // namespace jportal
