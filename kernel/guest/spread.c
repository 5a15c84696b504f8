/*
 * spread.c: a benchmark that only the scheduler's load balancer can make fast (the culprit kernel
 * target's guest benchmark).
 *
 * Each repetition pins the parent to CPU 0 and forks one CPU-bound child per CPU, so every child
 * starts on CPU 0 (fork placement honours the inherited affinity). Each child then widens its own
 * affinity to every CPU and spins through a fixed amount of work. Widening the mask does not move a
 * running task, and the children never sleep, so wakeup placement never runs either: only periodic,
 * nohz-idle or newly-idle balancing can move them to the idle CPUs. On a healthy kernel they spread
 * within a tick or two; on a kernel whose balancer is broken (seed 000's should_we_balance()
 * inversion) some repetitions stay stuck on CPU 0 and take about ncpu times as long.
 *
 * That effect is bimodal per repetition, so besides every repetition this program prints per-boot
 * statistics that turn it into a shift of location: the maximum and the median elapsed time, and the
 * number of repetitions in which every child finished on the same CPU.
 *
 * usage: spread [-r REPS] [-n TASKS] [-w LOOPS] [-m pin0|free]
 * Output: "spread.<key>: <value>" lines (lkp style), one "spread.rep: ..." line per repetition.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Sum of all jiffies and of idle+iowait jiffies from the first line of /proc/stat. */
static int read_cpu_jiffies(unsigned long long *total, unsigned long long *idle)
{
    unsigned long long v[10] = { 0 };
    FILE *f = fopen("/proc/stat", "r");
    if (!f)
        return -1;
    int n = fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2], &v[3],
                   &v[4], &v[5], &v[6], &v[7], &v[8], &v[9]);
    fclose(f);
    if (n < 4)
        return -1;
    *total = 0;
    /* guest and guest_nice (fields 9 and 10) are already counted in user and nice. */
    for (int i = 0; i < n && i < 8; i++)
        *total += v[i];
    *idle = v[3] + v[4];
    return 0;
}

static int compare_doubles(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static void spin(unsigned long loops)
{
    volatile unsigned long sink = 0;
    for (unsigned long i = 0; i < loops; i++)
        sink += i;
}

int main(int argc, char **argv)
{
    int reps = 8, tasks = 0, pin0 = 1;
    unsigned long loops = 40000000UL;
    int opt;
    while ((opt = getopt(argc, argv, "r:n:w:m:")) != -1) {
        switch (opt) {
        case 'r': reps = atoi(optarg); break;
        case 'n': tasks = atoi(optarg); break;
        case 'w': loops = strtoul(optarg, NULL, 10); break;
        case 'm': pin0 = strcmp(optarg, "free") != 0; break;
        default:
            fprintf(stderr, "usage: spread [-r REPS] [-n TASKS] [-w LOOPS] [-m pin0|free]\n");
            return 2;
        }
    }
    long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    if (ncpu < 1)
        ncpu = 1;
    if (tasks <= 0)
        tasks = (int)ncpu;
    if (reps < 1 || reps > 10000 || tasks > 1024) {
        fprintf(stderr, "spread: reps must be 1..10000 and tasks at most 1024\n");
        return 2;
    }
    double *elapsed = calloc((size_t)reps, sizeof(double));
    if (!elapsed)
        return 1;

    cpu_set_t all, cpu0;
    CPU_ZERO(&all);
    for (long c = 0; c < ncpu && c < CPU_SETSIZE; c++)
        CPU_SET(c, &all);
    CPU_ZERO(&cpu0);
    CPU_SET(0, &cpu0);

    printf("spread.nr_cpu: %ld\nspread.tasks: %d\nspread.loops: %lu\nspread.mode: %s\n", ncpu, tasks, loops,
           pin0 ? "pin0" : "free");
    unsigned long long total0 = 0, idle0 = 0, total1 = 0, idle1 = 0;
    int have_stat = read_cpu_jiffies(&total0, &idle0) == 0;
    int stuck = 0;
    for (int r = 0; r < reps; r++) {
        if (pin0 && sched_setaffinity(0, sizeof(cpu0), &cpu0) != 0) {
            perror("spread: sched_setaffinity(CPU 0)");
            return 1;
        }
        double start = now_seconds();
        pid_t pids[1024];
        for (int t = 0; t < tasks; t++) {
            pid_t pid = fork();
            if (pid < 0) {
                perror("spread: fork");
                return 1;
            }
            if (pid == 0) {
                if (pin0)
                    sched_setaffinity(0, sizeof(all), &all);
                spin(loops);
                int cpu = sched_getcpu();
                _exit(cpu < 0 ? 255 : cpu & 0xff);
            }
            pids[t] = pid;
        }
        char endcpus[4096] = "";
        size_t used = 0;
        int first_cpu = -1, same = 1;
        for (int t = 0; t < tasks; t++) {
            int status = 0;
            if (waitpid(pids[t], &status, 0) < 0) {
                perror("spread: waitpid");
                return 1;
            }
            int cpu = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
            if (first_cpu < 0)
                first_cpu = cpu;
            else if (cpu != first_cpu)
                same = 0;
            if (used < sizeof(endcpus) - 8)
                used += (size_t)snprintf(endcpus + used, sizeof(endcpus) - used, "%s%d", t ? "," : "", cpu);
        }
        elapsed[r] = now_seconds() - start;
        int rep_stuck = same && tasks > 1 && ncpu > 1;
        stuck += rep_stuck;
        if (pin0)
            sched_setaffinity(0, sizeof(all), &all);
        printf("spread.rep: %d elapsed=%.4f endcpus=%s stuck=%d\n", r + 1, elapsed[r], endcpus, rep_stuck);
        fflush(stdout);
    }
    if (have_stat)
        have_stat = read_cpu_jiffies(&total1, &idle1) == 0 && total1 > total0;

    double sum = 0;
    for (int r = 0; r < reps; r++)
        sum += elapsed[r];
    qsort(elapsed, (size_t)reps, sizeof(double), compare_doubles);
    double median = reps % 2 ? elapsed[reps / 2] : (elapsed[reps / 2 - 1] + elapsed[reps / 2]) / 2;
    printf("spread.runs: %d\n", reps);
    printf("spread.elapsed_mean: %.4f\n", sum / reps);
    printf("spread.elapsed_median: %.4f\n", median);
    printf("spread.elapsed_min: %.4f\n", elapsed[0]);
    printf("spread.elapsed_max: %.4f\n", elapsed[reps - 1]);
    printf("spread.stuck_runs: %d\n", stuck);
    if (have_stat)
        printf("spread.cpu_idle_percent: %.2f\n", 100.0 * (double)(idle1 - idle0) / (double)(total1 - total0));
    free(elapsed);
    return 0;
}
