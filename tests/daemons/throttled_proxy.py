"""A TCP proxy on loopback that slows one or both directions: a slow link, or a WAN's small
window, between a client and a server that run on this machine."""
import socket
import threading
import time


class ThrottledProxy:
    """Forwards 127.0.0.1:port to `target_port`: at most `up` bytes a second towards it and
    `down` back (None: as fast as it goes). `target_window`: the proxy's receive buffer on
    its connection to the target (a small window, as on a WAN). `delay`: seconds each
    connection waits, accepted, before the proxy reaches the target (a host slow to answer:
    SYNs dropped, a busy daemon). close() ends every connection."""

    def __init__(self, target_port, up=None, down=None, target_window=None, delay=0):
        self.listener = socket.socket()
        self.listener.bind(("127.0.0.1", 0))
        self.listener.listen(4)
        self.port = self.listener.getsockname()[1]
        self.address = f"127.0.0.1:{self.port}"
        self.target_port, self.up, self.down, self.window = target_port, up, down, target_window
        self.delay = delay
        self.sockets = [self.listener]
        threading.Thread(target=self.accept, daemon=True).start()

    def accept(self):
        while True:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            threading.Thread(target=self.relay, args=(client,), daemon=True).start()

    def relay(self, client):
        time.sleep(self.delay)
        try:
            server = socket.socket()
            if self.window:
                server.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, self.window)
            server.connect(("127.0.0.1", self.target_port))
        except OSError:
            client.close()
            return
        self.sockets += [client, server]
        threading.Thread(target=self.pipe, args=(client, server, self.up), daemon=True).start()
        threading.Thread(target=self.pipe, args=(server, client, self.down), daemon=True).start()

    def pipe(self, source, sink, rate):
        try:
            while True:
                chunk = source.recv(4096 if rate else 65536)
                if not chunk:
                    break
                sink.sendall(chunk)
                if rate:
                    time.sleep(len(chunk) / rate)
        except OSError:
            pass
        for s in (source, sink):
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    def close(self):
        for s in self.sockets:
            try:
                s.close()
            except OSError:
                pass
