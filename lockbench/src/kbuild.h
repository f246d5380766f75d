/*
 * kbuild.h - `lockbench kernel build`: configure a kernel tree with the
 * project's config fragment (and, with --debug, the debug fragment on top)
 * and build its bzImage, incrementally when the output folder is already
 * configured.  docs/kernel.md says how to use it.
 */
#ifndef LOCKBENCH_KBUILD_H
#define LOCKBENCH_KBUILD_H

/*
 * argv[0] is "build".  Returns the exit status: 0 built, 1 the build failed
 * (the compiler's error lines on stderr), 2 bad usage.
 */
int kbuild_main(int argc, char **argv);

#endif
