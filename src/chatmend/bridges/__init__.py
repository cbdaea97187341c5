"""Bridges to the frameworks agents are built with: repair their own message objects, in their own hooks.

Each bridge is a module importing its framework (`chatmend.bridges.pydantic_ai` needs `chatmend[pydantic-ai]`):
importing `chatmend` or this package costs none of them.
"""
