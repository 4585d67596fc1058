"""A ClickHouse server (Debian's clickhouse-server) living in a test directory:
its own copy of the stock config with data and log paths there, listening on
127.0.0.1 only, on free ports, https removed. Queries go over its HTTP
interface."""
import os
import re
import shutil
import socket
import subprocess
import time
import urllib.error
import urllib.request

STOCK = "/etc/clickhouse-server"


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


class ClickHouse:
    def __init__(self, directory, user="tracer", password="s3cret-pass"):
        self.dir = directory
        self.proc = None
        self.http_port = free_port()
        self.tcp_port = free_port()
        self.inter_port = free_port()
        self.user, self.password = user, password

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
        if not os.path.exists(os.path.join(self.dir, "config.xml")):
            self.configure()
        self.proc = subprocess.Popen(["clickhouse-server", "--config-file", os.path.join(self.dir, "config.xml")],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=self.dir)
        end = time.time() + timeout
        while time.time() < end:
            if self.proc.poll() is not None:
                raise RuntimeError(f"clickhouse-server exited {self.proc.returncode}; logs in {self.dir}/log")
            try:
                if self.query("SELECT 1").strip() == "1":
                    return
            except (OSError, urllib.error.URLError):
                pass
            time.sleep(0.2)
        raise RuntimeError("clickhouse-server did not answer")

    def stop(self):
        if self.proc and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
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
