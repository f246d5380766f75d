/*
 * kernel_run.h - `lockbench kernel run`: boot a kernel under qemu, run
 * locktorture and the guest lockbench workloads inside, read the console
 * (kernel_run.c; docs/kernel.md says how to use it).
 */
#ifndef LOCKBENCH_KERNEL_RUN_H
#define LOCKBENCH_KERNEL_RUN_H

/* argv[0] is "run".  Returns the exit status of `lockbench kernel`. */
int kernel_run_main(int argc, char **argv);

#endif
