"""The planted case: starter code every group was given, one solution copied from group A to
group B with every identifier renamed and the comments rewritten, and two solutions written
independently (scikit-learn; PyTorch)."""

STARTER = '''
import numpy as np

def load_data(path):
    """Load the dataset from a CSV file and return features and labels."""
    data = np.loadtxt(path, delimiter=",", skiprows=1)
    return data[:, :-1], data[:, -1]

def main():
    x, y = load_data("train.csv")
    model = train(x, y)
    print("accuracy", evaluate(model, x, y))
'''
ORIGINAL = (
    STARTER
    + """
def train(features, labels, epochs=100, lr=0.01):
    # plain gradient descent on the squared loss
    weights = np.zeros(features.shape[1])
    bias = 0.0
    for epoch in range(epochs):
        predictions = features @ weights + bias
        error = predictions - labels
        grad_w = features.T @ error / len(labels)
        grad_b = error.mean()
        weights -= lr * grad_w
        bias -= lr * grad_b
        if epoch % 10 == 0:
            loss = (error ** 2).mean()
            print(f"epoch {epoch}: loss {loss:.4f}")
    return weights, bias

def evaluate(model, features, labels):
    weights, bias = model
    scores = features @ weights + bias
    return float(((scores > 0.5) == (labels > 0.5)).mean())
"""
)
RENAMED_COPY = (
    STARTER
    + """
def train(X, Y, n_iter=100, step=0.01):
    # batch GD, minimises mean squared error
    w = np.zeros(X.shape[1])
    b0 = 0.0
    for it in range(n_iter):
        yhat = X @ w + b0
        diff = yhat - Y
        gw = X.T @ diff / len(Y)
        gb = diff.mean()
        w -= step * gw
        b0 -= step * gb
        if it % 10 == 0:
            mse = (diff ** 2).mean()
            print(f"iteration {it}: mse {mse:.4f}")
    return w, b0

def evaluate(params, X, Y):
    w, b0 = params
    s = X @ w + b0
    return float(((s > 0.5) == (Y > 0.5)).mean())
"""
)
INDEPENDENT_SKLEARN = (
    STARTER
    + """
from sklearn.linear_model import LogisticRegression

def train(x, y):
    clf = LogisticRegression(max_iter=500, C=0.5)
    clf.fit(x, y > 0.5)
    return clf

def evaluate(model, x, y):
    predicted = model.predict(x)
    hits = sum(1 for p, t in zip(predicted, y > 0.5) if p == t)
    return hits / len(y)
"""
)
INDEPENDENT_TORCH = (
    STARTER
    + """
import torch

def train(x, y):
    net = torch.nn.Sequential(torch.nn.Linear(x.shape[1], 16), torch.nn.ReLU(), torch.nn.Linear(16, 1))
    opt = torch.optim.Adam(net.parameters(), lr=1e-3)
    xt, yt = torch.tensor(x).float(), torch.tensor(y).float().unsqueeze(1)
    for _ in range(200):
        opt.zero_grad()
        loss = torch.nn.functional.binary_cross_entropy_with_logits(net(xt), yt)
        loss.backward()
        opt.step()
    return net

def evaluate(net, x, y):
    with torch.no_grad():
        out = torch.sigmoid(net(torch.tensor(x).float())).squeeze(1).numpy()
    return float(((out > 0.5) == (y > 0.5)).mean())
"""
)
