/* Leveled logging to stderr (journald picks it up under systemd). */
#ifndef TRACER_LOG_H
#define TRACER_LOG_H

enum log_level { LOG_LVL_ERROR = 0, LOG_LVL_WARN, LOG_LVL_INFO, LOG_LVL_DEBUG };

void log_init(const char *program);
/* Returns 0, or -1 if name is not one of error, warn, info, debug. */
int log_set_level_name(const char *name);
void log_set_level(enum log_level level);
enum log_level log_get_level(void);
void log_msg(enum log_level level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#define log_error(...) log_msg(LOG_LVL_ERROR, __VA_ARGS__)
#define log_warn(...) log_msg(LOG_LVL_WARN, __VA_ARGS__)
#define log_info(...) log_msg(LOG_LVL_INFO, __VA_ARGS__)
#define log_debug(...) log_msg(LOG_LVL_DEBUG, __VA_ARGS__)

#endif
