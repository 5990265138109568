/*
 * cp_doctor.h - `cuprobe-analyze doctor`: checks this machine's GPU stack
 * layer by layer (hardware, driver, runtime, allocation and transfer).
 */
#ifndef CP_DOCTOR_H
#define CP_DOCTOR_H

/*! cp_doctor_main() : run `doctor` with its arguments (argv[0] is
 *  "doctor"; see docs/doctor.md).
 *  @return : the process exit status: 0 every check passed (warnings
 *  allowed), 1 a check failed, 2 usage error. */
int cp_doctor_main(int argc, char **argv);

#endif /* CP_DOCTOR_H */
