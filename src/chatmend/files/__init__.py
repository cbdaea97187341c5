"""The file layer every session store stands on: `Session` (a history read from a file, with where each message
came from and how to write it back), input limits and decoding (`io`), atomic writes, backups and locks
(`io`, `inplace`), provider request bodies as files (`bodies`) and the problems a session shows (`problems`).

It sits below the stores (`chatmend.transcripts`) and above the providers; the format table that detects a file's
format and picks its store is `chatmend.formats`.
"""
