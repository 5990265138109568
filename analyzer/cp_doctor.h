/*
 * cp_doctor.h - `cuprobe-analyze doctor`: rule-based findings on traces.
 */
#ifndef CP_DOCTOR_H
#define CP_DOCTOR_H

/*! cp_doctor_main() : run `doctor` with its arguments (argv[0] is
 *  "doctor").  A weak default in cp_doctor_stub.c says it is not built.
 *  @return : the process exit status (0 ok, 2 usage or input error). */
int cp_doctor_main(int argc, char **argv);

#endif /* CP_DOCTOR_H */
