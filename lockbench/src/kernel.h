/*
 * kernel.h - `lockbench kernel`: build a kernel tree with the project's
 * config fragment, boot it under qemu with an initramfs holding a static
 * lockbench, run locktorture and the futex and VFS workloads inside, and
 * read the serial console for results and lockups.  docs/kernel.md says
 * how to use it.
 */
#ifndef LOCKBENCH_KERNEL_H
#define LOCKBENCH_KERNEL_H

/*
 * argv[0] is "kernel"; argv[1] is the subcommand (build or run).  Returns
 * the process exit status: 0 ok, 1 failure (build failed, boot gave no
 * result), 2 bad usage, 3 at least one boot locked up.
 */
int kernel_main(int argc, char **argv);

#endif
