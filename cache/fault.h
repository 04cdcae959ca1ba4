/* Fault injection for tests (AUTOGRAPH_FAULT, fault.c): graph calls made to fail. */
#ifndef AG_FAULT_H
#define AG_FAULT_H

/* 1 when this call of that kind must fail. */
enum ag_fault_point { AG_F_ADD_NODE, AG_F_INSTANTIATE, AG_F_UPLOAD, AG_F_UPDATE, AG_F_SET_PARAMS,
                      AG_F_LAUNCH, AG_F_COUNT };
int ag_fault(enum ag_fault_point p);

#endif
