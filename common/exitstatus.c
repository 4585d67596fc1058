#include "common/exitstatus.h"

struct exit_status exit_status_decode(int raw)
{
	struct exit_status st = {0};
	int sig = raw & 0x7f;

	if (sig == 0) {
		st.exited = true;
		st.code = (raw >> 8) & 0xff;
	} else {
		st.signal = sig;
		st.core_dumped = (raw & 0x80) != 0;
	}
	return st;
}

int exit_status_shell(struct exit_status st)
{
	return st.exited ? st.code : 128 + st.signal;
}
