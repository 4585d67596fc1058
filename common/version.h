/* tracer's version, printed by every program's --version. */
#ifndef TRACER_VERSION_H
#define TRACER_VERSION_H

#define TRACER_VERSION "0.2.0"

#endif
