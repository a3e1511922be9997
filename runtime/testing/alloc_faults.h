/* Allocation-failure injection (alloc_faults.c): what a program linked with it can ask of it, for
 * sweeps that fail each allocation of a piece of work in turn within one process. */
#ifndef TFDEV_TESTING_ALLOC_FAULTS_H
#define TFDEV_TESTING_ALLOC_FAULTS_H

#include <stdbool.h>

/* Allocations counted since the process started. */
long long tfd_alloc_faults_count(void);
/* Fails the allocation whose count is n (once); 0: none. Clears tfd_alloc_faults_failed. */
void tfd_alloc_faults_fail_at(long long n);
/* Whether the allocation asked for has failed yet. */
bool tfd_alloc_faults_failed(void);

#endif
