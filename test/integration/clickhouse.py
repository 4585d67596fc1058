"""A ClickHouse server (Debian's clickhouse-server) living in a test directory:
its own copy of the stock config with data and log paths there, listening on
127.0.0.1 only, on free ports, https removed. Queries go over its HTTP
interface."""
import os
import re
import shutil
import subprocess
import time
import urllib.error
import urllib.request

from harness import stop_process
from ports import free_port

STOCK = "/etc/clickhouse-server"


class PortTaken(RuntimeError):
    pass


class ClickHouse:
    def __init__(self, directory, user="tracer", password="s3cret-pass"):
        self.dir = directory
        self.proc = None
        self.http_port = free_port()
        self.tcp_port = free_port()
        self.inter_port = free_port()
        self.user, self.password = user, password
        self.started_once = False

    @staticmethod
    def available():
        return shutil.which("clickhouse-server") is not None and os.path.isdir(STOCK)

    def configure(self):
        d = self.dir
        os.makedirs(os.path.join(d, "data"), exist_ok=True)
        os.makedirs(os.path.join(d, "log"), exist_ok=True)
        cfg = open(os.path.join(STOCK, "config.xml")).read()
        cfg = re.sub(r"<openSSL>.*?</openSSL>", "", cfg, flags=re.S)
        cfg = re.sub(r"<https_port>.*?</https_port>", "", cfg)
        cfg = re.sub(r"<listen_host>[^<]*</listen_host>", "", cfg)
        cfg = cfg.replace("<http_port>8123</http_port>",
                          f"<http_port>{self.http_port}</http_port><listen_host>127.0.0.1</listen_host>")
        cfg = cfg.replace("<tcp_port>9000</tcp_port>", f"<tcp_port>{self.tcp_port}</tcp_port>")
        cfg = cfg.replace("<interserver_http_port>9009</interserver_http_port>",
                          f"<interserver_http_port>{self.inter_port}</interserver_http_port>")
        cfg = cfg.replace("/var/log/clickhouse-server/", os.path.join(d, "log") + "/")
        cfg = cfg.replace("/var/lib/clickhouse/", os.path.join(d, "data") + "/")
        cfg = cfg.replace("<users_config>users.xml</users_config>",
                          f"<users_config>{os.path.join(d, 'users.xml')}</users_config>")
        with open(os.path.join(d, "config.xml"), "w") as f:
            f.write(cfg)
        users = open(os.path.join(STOCK, "users.xml")).read()
        # A password-protected user for the shipper, next to the stock default user.
        users = users.replace("<users>", f"""<users>
        <{self.user}>
            <password>{self.password}</password>
            <networks><ip>127.0.0.1</ip></networks>
            <profile>default</profile>
            <quota>default</quota>
        </{self.user}>""", 1)
        with open(os.path.join(d, "users.xml"), "w") as f:
            f.write(users)

    def start(self, timeout=30):
        # free_port() only borrows a port: something else can take it before the
        # server binds. Before the first successful start the ports are still ours
        # to change, so a lost race picks new ones (a restart must keep them).
        for attempt in range(5):
            try:
                return self._start_once(timeout)
            except PortTaken:
                if self.started_once or attempt == 4:
                    raise
                self.http_port, self.tcp_port, self.inter_port = free_port(), free_port(), free_port()
                self.configure()

    def _start_once(self, timeout):
        if not os.path.exists(os.path.join(self.dir, "config.xml")):
            self.configure()
        log_start = os.path.getsize(self._error_log_path()) if os.path.exists(self._error_log_path()) else 0
        self.proc = subprocess.Popen(["clickhouse-server", "--config-file", os.path.join(self.dir, "config.xml")],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=self.dir)
        end = time.time() + timeout
        while time.time() < end:
            if self.proc.poll() is not None:
                what = f"clickhouse-server exited {self.proc.returncode}; logs in {self.dir}/log"
                if "Address already in use" in self._error_log_since(log_start):
                    raise PortTaken(what)
                raise RuntimeError(what)
            try:
                if self.query("SELECT 1").strip() == "1":
                    self.started_once = True
                    return
            except (OSError, urllib.error.URLError):
                pass
            time.sleep(0.2)
        raise RuntimeError("clickhouse-server did not answer")

    def _error_log_path(self):
        return os.path.join(self.dir, "log", "clickhouse-server.err.log")

    def _error_log_since(self, offset):
        try:
            with open(self._error_log_path(), errors="replace") as f:
                f.seek(offset)
                return f.read()
        except OSError:
            return ""

    def stop(self):
        if self.proc:
            stop_process(self.proc)
        self.proc = None

    @property
    def url(self):
        return f"http://127.0.0.1:{self.http_port}"

    def query(self, sql):
        """Runs SQL (POST: DDL and writes are allowed); raises with the server's answer."""
        req = urllib.request.Request(self.url + "/", data=sql.encode(), method="POST")
        try:
            with urllib.request.urlopen(req, timeout=30) as r:
                return r.read().decode()
        except urllib.error.HTTPError as e:
            raise RuntimeError(f"ClickHouse: {e.code}: {e.read().decode()[:500]}") from None

    def rows(self, sql):
        return [line.split("\t") for line in self.query(sql).splitlines() if line]
